/** The protocol's time: whole seconds since the Unix epoch. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
