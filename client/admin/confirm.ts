// The confirmation of a destructive act: a modal <dialog> that says what the act does, answered by its buttons (or
// Escape, which cancels). Nothing is sent before the admin confirms.

import { $, input } from './dom.js'

export interface Confirmation {
  /** The question, such as "Disable ann@example.com?". */
  title: string
  /** What the act does, and what it cannot undo. */
  text: string
  /** The label of the button that does it: the act's own name ("Disable"), never a bare "OK". */
  action: string
  /**
   * A text the admin must type to confirm (the account's address, for a deletion); the button stays disabled until
   * it is typed exactly.
   */
  typed?: string
}

/** Asks; resolves true when the admin confirmed, false when they cancelled. */
export function confirmAct(confirmation: Confirmation): Promise<boolean> {
  const dialog = $('confirm') as HTMLDialogElement
  const ok = $('confirm-ok') as HTMLButtonElement
  const typedInput = input('confirm-typed')
  $('confirm-title').textContent = confirmation.title
  $('confirm-text').textContent = confirmation.text
  ok.textContent = confirmation.action
  const { typed } = confirmation
  $('confirm-typed-field').hidden = typed === undefined
  typedInput.value = ''
  if (typed !== undefined) $('confirm-typed-label').textContent = `Type ${typed} to confirm`
  ok.disabled = typed !== undefined
  const onInput = () => {
    ok.disabled = typed !== undefined && typedInput.value.trim() !== typed
  }
  typedInput.addEventListener('input', onInput)

  return new Promise((resolve) => {
    const finish = (confirmed: boolean) => {
      typedInput.removeEventListener('input', onInput)
      ok.removeEventListener('click', onOk)
      $('confirm-cancel').removeEventListener('click', onCancel)
      dialog.removeEventListener('close', onClose)
      if (dialog.open) dialog.close()
      resolve(confirmed)
    }
    const onOk = () => finish(!ok.disabled)
    const onCancel = () => finish(false)
    // Escape closes the dialog by itself
    const onClose = () => finish(false)
    ok.addEventListener('click', onOk)
    $('confirm-cancel').addEventListener('click', onCancel)
    dialog.addEventListener('close', onClose)
    dialog.showModal()
    // the safe choice has the focus, unless a text is to be typed first
    ;(typed !== undefined ? typedInput : $('confirm-cancel')).focus()
  })
}
