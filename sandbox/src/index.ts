export { TelegramSandbox, startSandbox, DEFAULT_TOKEN, DEFAULT_USER, type SandboxOptions, type SayExtras } from './server';
export {
  SandboxState,
  BOT_USER,
  DEFAULT_CHATS,
  type SandboxMessage,
  type PhotoSize,
  type MenuButton,
  type SandboxChat,
  type SandboxTopic,
  type SandboxUser,
  type Fault,
  type ChatMember,
  type ChatPermissions,
  type MemberRights,
  type MemberStatus,
  type ApiCall,
  type Poll,
  type Webhook,
  type WebhookDelivery,
} from './state';
export { parseHtml } from './html';
export {
  CaptchaStandIn,
  CAPTCHA_STAND_IN_PROVIDERS,
  widgetScript,
  type CaptchaStandInProvider,
  type CaptchaVerifyFault,
  type CaptchaVerification,
} from './captcha';
export { signInitData, launchUrl, SANDBOX_THEME, type InitDataOptions } from './init-data';
export { DEFAULT_VISITOR, BOT_LINK_PATH } from './visitor';
