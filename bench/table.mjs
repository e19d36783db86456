// The run's one table (figure, limit, ratio, target) as aligned text for the terminal and as Markdown for the
// written report, and the list of missed targets.

const HEADERS = [
  'backend',
  'figure',
  'value',
  'p50 ms',
  'p99 ms',
  'errors',
  'peak RSS MiB',
  'limit',
  'limit value',
  'ratio',
  'target',
  'result',
]

/**
 * The table's cells, one array per row.
 * @param {import('./rows.mjs').Row[]} rows
 */
function cells(rows) {
  return rows.map((row) => [
    row.backend,
    row.figure,
    `${formatNumber(row.value, row.unit)} ${row.unit}`,
    formatMs(row.p50),
    row.p99 === null
      ? ''
      : `${formatMs(row.p99)}${row.p99Worst !== null && row.p99Worst !== row.p99 ? ` (worst ${formatMs(row.p99Worst)})` : ''}`,
    row.errors === null ? '' : String(row.errors),
    row.peakRssMiB === null || Number.isNaN(row.peakRssMiB) ? '' : row.peakRssMiB.toFixed(0),
    row.limit ?? '',
    row.limitValue === null ? '' : formatNumber(row.limitValue, ''),
    row.ratio === null
      ? ''
      : `${formatRatio(row)} (${row.ratios.map((ratio) => ratio.toFixed(2)).join(', ')})`,
    row.target === null
      ? ''
      : `${row.target.of === 'ratio' ? 'ratio' : row.unit} ${symbol(row.target.op)} ${row.target.value}`,
    row.pass === null ? '' : row.pass ? 'pass' : 'MISSED',
  ])
}

/**
 * The table as aligned plain text.
 * @param {import('./rows.mjs').Row[]} rows
 */
export function textTable(rows) {
  const body = cells(rows)
  const widths = HEADERS.map((header, column) =>
    Math.max(header.length, ...body.map((line) => (line[column] ?? '').length)),
  )
  const format = (/** @type {string[]} */ line) =>
    line
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd()
  return [format(HEADERS), format(widths.map((width) => '-'.repeat(width))), ...body.map(format)].join('\n')
}

/**
 * The table in Markdown.
 * @param {import('./rows.mjs').Row[]} rows
 */
export function markdownTable(rows) {
  const line = (/** @type {string[]} */ values) =>
    `| ${values.map((value) => value.replace(/\|/g, '\\|')).join(' | ')} |`
  return [line(HEADERS), line(HEADERS.map(() => '---')), ...cells(rows).map(line)].join('\n')
}

/**
 * The rows whose target was missed.
 * @param {import('./rows.mjs').Row[]} rows
 */
export function missedTargets(rows) {
  return rows.filter((row) => row.pass === false)
}

/**
 * The median ratio with two decimals, or three where two would round a miss onto its target (0.897 is not 0.90).
 * @param {import('./rows.mjs').Row} row
 */
function formatRatio(row) {
  const ratio = row.ratio ?? Number.NaN
  const short = ratio.toFixed(2)
  const misleading = row.pass === false && row.target !== null && Number(short) === row.target.value
  return misleading ? ratio.toFixed(3) : short
}

/** @param {import('./rows.mjs').Row} row */
export function describeMiss(row) {
  const target = /** @type {NonNullable<typeof row.target>} */ (row.target)
  const actual = target.of === 'ratio' ? formatRatio(row) : formatNumber(row.value, row.unit)
  return `${row.backend}: ${row.figure}: ${target.of} ${actual}, target ${symbol(target.op)} ${target.value}`
}

/**
 * @param {number} value
 * @param {string} unit
 */
function formatNumber(value, unit) {
  if (Number.isNaN(value)) return '?'
  if (unit === 'ms') return value >= 100 ? Math.round(value).toLocaleString('en-US') : formatMs(value)
  if (unit === 'MiB' || unit === 'errors') return value.toFixed(0)
  return value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(1)
}

/** @param {number | null} value */
function formatMs(value) {
  if (value === null) return ''
  if (Number.isNaN(value)) return '?'
  return Number.isInteger(value) ? String(value) : value.toFixed(1)
}

/** @param {'>=' | '<=' | '='} op */
function symbol(op) {
  return op === '>=' ? '≥' : op === '<=' ? '≤' : '='
}
