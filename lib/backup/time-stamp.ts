/** `20261126T124300Z`: a compact UTC time for names of things kept aside. */
export function timeStamp (at = new Date()): string {
  return at.toISOString().replace(/[-:]|\.\d+/g, '')
}
