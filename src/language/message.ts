/**
 * A text the service shows a person (an error's message, a field's problem, a sign-in page's line), named by its key
 * in the message catalogues (messages/<language>.json) with the values of its `{placeholders}`. It is written in a
 * language only when it is sent: in the client's (docs/api.md §1.5), in English for logs and the commands.
 */
export interface Message {
  readonly key: string
  readonly values: Readonly<Record<string, MessageValue>>
}

/** A placeholder's value: text and numbers as they are, a Message written in the same language as the one it is in. */
export type MessageValue = string | number | Message

/** The message `key` with `values` for its placeholders. */
export function message(key: string, values: Readonly<Record<string, MessageValue>> = {}): Message {
  return { key, values }
}

/** `count` with its noun: the key `<key>.one` for 1, `<key>.other` for any other count (`{count}` in both). */
export function counted(key: string, count: number): Message {
  return message(count === 1 ? `${key}.one` : `${key}.other`, { count })
}
