/** Placeholder: the client is being written. */
export function createTesseraClient(): void {}
