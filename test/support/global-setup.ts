import { backends, skippedBackends } from './backends.js'

/** Says once per run which storage backends the suites run against, and why any is skipped. */
export default function announceBackends(): void {
  console.log(`storage backends under test: ${backends.map((backend) => backend.name).join(', ')}`)
  for (const { name, reason } of skippedBackends) console.log(`skipping the ${name} suites: ${reason}`)
}
