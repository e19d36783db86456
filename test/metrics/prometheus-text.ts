/** One line of a scrape: a metric name, its labels and its value. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** A page of the Prometheus text format (version 0.0.4) as its samples; comments and blank lines are skipped. */
export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null) throw new Error(`not a sample line: ${line}`)
    const [, name = '', labelText = '', value = ''] = match
    const labels: Record<string, string> = {}
    for (const [, label = '', quoted = ''] of labelText.matchAll(
      /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g,
    )) {
      labels[label] = quoted.replace(/\\(.)/g, (_, escaped: string) => (escaped === 'n' ? '\n' : escaped))
    }
    samples.push({ name, labels, value: value === '+Inf' ? Number.POSITIVE_INFINITY : Number(value) })
  }
  return samples
}

/** The value of the sample of `name` whose labels are exactly `labels`; undefined when there is none. */
export function sampleValue(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const wanted = Object.entries(labels)
  const found = samples.filter(
    (sample) =>
      sample.name === name &&
      Object.keys(sample.labels).length === wanted.length &&
      wanted.every(([label, value]) => sample.labels[label] === value),
  )
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} appears ${found.length} times`)
  return found[0]?.value
}

/** GET `url` (a metrics endpoint): its samples, after checking the answer is a Prometheus text page. */
export async function scrape(url: string): Promise<Sample[]> {
  const response = await fetch(url)
  const text = await response.text()
  if (response.status !== 200) throw new Error(`scrape of ${url} answered ${response.status}: ${text}`)
  if (response.headers.get('content-type') !== 'text/plain; version=0.0.4; charset=utf-8') {
    throw new Error(`scrape of ${url} answered ${response.headers.get('content-type')}`)
  }
  return parsePrometheusText(text)
}
