/** A tracked token's logo, served by protoscan itself (the configured image, or a badge of its colour). */
export function TokenLogo({ address, size = 24 }: { address: string; size?: number }) {
  return <img class="logo" src={`/logos/${address}`} alt="" width={size} height={size} loading="lazy" />;
}
