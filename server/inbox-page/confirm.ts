import type { App } from './app';
import { el } from './dom';

/** Asks the manager: Telegram's own dialog when the page runs inside Telegram, else a modal `<dialog>`. */
export function confirmAction(app: App, message: string): Promise<boolean> {
  const webApp = app.launch.webApp;
  if (webApp?.showConfirm) {
    const showConfirm = webApp.showConfirm.bind(webApp);
    return new Promise((resolve) => showConfirm(message, resolve));
  }
  return new Promise((resolve) => {
    const text = el('p', { id: 'confirm-text' }, message);
    const dialog = el('dialog', { class: 'confirm', 'aria-labelledby': 'confirm-text' });
    const finish = (ok: boolean) => {
      dialog.close();
      dialog.remove();
      resolve(ok);
    };
    dialog.append(
      text,
      el(
        'div',
        { class: 'row' },
        el('button', { type: 'button', class: 'secondary', onclick: () => finish(false) }, app.t.cancel),
        el('button', { type: 'button', class: 'primary', onclick: () => finish(true) }, app.t.confirm),
      ),
    );
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      finish(false);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
