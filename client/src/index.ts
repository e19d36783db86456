export { createTesseraClient } from './tessera-client.js'
