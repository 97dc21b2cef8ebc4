import type { BotIdentity } from '../telegram/telegram.gateway';
import { chooseChat, describeChat, userName, type ChatChoice } from './chat-chooser';
import { isForTheServer, SetupSession } from './setup-session';

/**
 * `npm run leads -- setup` (docs/requirements.md §16.1): from a bot token alone to the chat lines of `.env`, found from
 * updates the operator causes, then the bot's rights there and a test card whose button press must come back.
 */
export class SetupService extends SetupSession {
  /** The exit code: 0 every check passed; 1 a problem (said in its line); 130 stopped by the operator. */
  async run(): Promise<number> {
    // The token first: a wrong one is the problem to tell, whatever else is missing.
    const me = await this.identify();
    if (!me) return 1;
    if (!this.interactive && this.options.chat === undefined && this.options.from === undefined) {
      // Nobody can confirm the group: the first one to show up could be a stranger's (anyone may add a bot to a group).
      this.fail(
        "without a terminal setup takes only the group you name: run it with --chat <the group's chat id> " +
          "or --from <your Telegram user id> (then the group you add the bot to is taken, and nobody else's)",
      );
      return 1;
    }
    if (!(await this.takeOverUpdates())) return 1;
    try {
      const leads = await chooseChat(this, me, null);
      const admin = leads && this.options.admin ? await chooseChat(this, me, leads) : null;
      if (!leads) return this.stopped ? 130 : 1;
      this.printEnv(leads, admin);
      const leadsWritable = await this.rights(me, 'leads chat', leads);
      if (admin && (await this.rights(me, 'admin chat', admin))) await this.adminMessage(admin);
      if (leadsWritable) await this.card(leads);
      if (this.stopped) return 130;
      const problems = this.problems;
      this.say(
        problems > 0
          ? `setup: ${problems} problem${problems > 1 ? 's' : ''} above; fix and run it again (or npm run leads -- doctor once .env is set)`
          : 'setup: every check passed. Paste the lines above into .env, start the server, then run npm run leads -- doctor',
      );
      return problems > 0 ? 1 : 0;
    } finally {
      await this.handBack();
    }
  }

  private async identify(): Promise<BotIdentity | null> {
    const me = await this.checkToken(
      this.telegram,
      ' (/mybots → the bot → API Token)',
      (why) =>
        `TELEGRAM_BOT_TOKEN: the token could not be checked: Telegram did not answer (${why}); check TELEGRAM_API_ROOT and the network`,
    );
    if (me?.can_read_all_group_messages === false) {
      this.note('privacy mode is on (as BotFather sets it): in groups the bot sees commands and its buttons, all it needs');
    }
    return me;
  }

  /** Not while a webhook is set (getUpdates is refused), nor over presses and commands for the server (it would drop them). */
  private async takeOverUpdates(): Promise<boolean> {
    const hook = await this.telegram.call('getWebhookInfo', {});
    if (!hook.ok) {
      this.fail(`getWebhookInfo failed (${hook.description}): try again`);
      return false;
    }
    if (hook.value.url) {
      this.say(
        `a webhook is set: Telegram posts this bot's updates to ${hook.value.url} (a server in webhook mode), so setup cannot read them`,
      );
      if (
        !this.options.deleteWebhook &&
        !(await this.yes('Delete the webhook? The server sets it again when it starts with TELEGRAM_WEBHOOK_URL. [y/N] '))
      ) {
        this.fail(
          'a webhook is set: run setup with --delete-webhook (the server sets it again at its start), or send /stickers_chatid in the group: the running server answers it',
        );
        return false;
      }
      const deleted = await this.telegram.call('deleteWebhook', { drop_pending_updates: false });
      if (!deleted.ok) {
        this.fail(`deleteWebhook failed (${deleted.description})`);
        return false;
      }
      this.ok('webhook deleted: the server sets it again when it starts in webhook mode');
    }
    const pending = await this.pending();
    if (!pending) return false;
    const forServer = pending.filter((u) => isForTheServer(u));
    if (forServer.length > 0) {
      this.say(`${forServer.length} button press(es) or command(s) wait for the server: setup would take them from it`);
      if (!this.options.dropPending && !(await this.yes('Drop them and go on? [y/N] '))) {
        this.fail('updates wait for the server: start it once so that it takes them, then run setup again (or pass --drop-pending)');
        return false;
      }
      this.skipBuffered();
      this.note(`${forServer.length} waiting update(s) dropped`);
    }
    return true;
  }

  private printEnv(leads: ChatChoice, admin: ChatChoice | null): void {
    this.say('');
    this.say('Paste into .env (beside TELEGRAM_BOT_TOKEN):');
    this.say(`LEADS_CHAT_ID=${leads.chatId}`);
    if (leads.threadId) this.say(`LEADS_THREAD_ID=${leads.threadId}`);
    if (admin) {
      this.say(`ADMIN_CHAT_ID=${admin.chatId}`);
      if (admin.threadId) this.say(`ADMIN_THREAD_ID=${admin.threadId}`);
    }
    this.say('');
  }

  /** True when the bot may post and edit there. */
  private async rights(me: BotIdentity, label: string, choice: ChatChoice): Promise<boolean> {
    const name = `${label} ${describeChat(choice)}`;
    const unreachable = (chat: { description: string }) =>
      `${name}: the bot cannot reach it (${chat.description}): add the bot to the chat again`;
    const rights = await this.checkRights(this.telegram, me.id, choice.chatId, unreachable, () => name);
    if (!rights) return false;
    if (rights.manageTopics === false) this.note(`${label}: the bot may not manage topics (not needed to post in an open topic)`);
    if (rights.manageTopics === true) this.ok(`${label}: the bot may manage topics`);
    return true;
  }

  private async adminMessage(admin: ChatChoice): Promise<void> {
    const sent = await this.telegram.send({ ...admin, text: this.options.texts.adminTest, html: false });
    if (sent.ok) this.ok(`admin chat: a test message went to ${describeChat(admin)}`);
    else this.fail(`admin chat: the test message was refused (${sent.description})`);
  }

  private async card(leads: ChatChoice): Promise<void> {
    const sent = await this.telegram.send({
      ...leads,
      text: this.options.texts.card,
      html: false,
      keyboard: { inline_keyboard: [[{ text: this.options.texts.button, callback_data: this.pressData }]] },
    });
    if (!sent.ok) {
      this.fail(`test card: Telegram refused it (${sent.description})`);
      return;
    }
    this.ok(`test card sent to ${describeChat(leads)} (message ${sent.value.message_id})`);
    this.say(`   Press «${this.options.texts.button}» under it. Waiting up to ${this.options.timeout} s…`);
    const seen = await this.wait((u) => {
      const query = u.callback_query as { id: string; data?: string; from?: { first_name?: string } } | undefined;
      return query?.data === this.pressData ? query : null;
    }, false);
    const press = seen.value;
    const close = (text: string) => this.telegram.edit(leads.chatId, sent.value.message_id, text, false, { inline_keyboard: [] });
    if (!press) {
      await close(this.options.texts.notPressed);
      if (seen.kind === 'timeout')
        this.fail(
          `buttons: no press of the test card reached the bot within ${this.options.timeout} s (run setup again to repeat the check)`,
        );
      return;
    }
    await this.telegram.answerCallback(press.id, this.options.texts.pressAnswer);
    await close(this.options.texts.pressed(userName(press.from)));
    this.ok(`buttons: the press of ${userName(press.from)} reached the bot`);
  }

  private async handBack(): Promise<void> {
    const unconfirmed = await this.confirm();
    if (unconfirmed) this.note(`the updates setup read could not be confirmed (${unconfirmed.description}): the server may see them once`);
    const taken = this.takenFromServer.length;
    if (taken > 0) this.note(`${taken} button press(es) or command(s) for the server came while setup waited: press or send them again`);
    if (this.stopped) this.say('setup stopped');
  }
}
