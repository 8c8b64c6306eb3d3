// Config paths written the way a developer would index the config object: `tables[1].fields[3].type`.

/** `['tables', 1, 'fields', 3, 'type']` -> `tables[1].fields[3].type`; the root is `config`. */
export function formatPath (segments: readonly (string | number)[]): string {
  let out = ''
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`
    else if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(segment)) out += out === '' ? segment : `.${segment}`
    else out += `[${JSON.stringify(segment)}]`
  }
  return out === '' ? 'config' : out
}
