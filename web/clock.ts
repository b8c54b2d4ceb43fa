import { signal } from "@preact/signals";

/** The time, ticking every second, so that relative times ("12 s ago") stay true without a reload. */
export const now = signal(Date.now());
setInterval(() => {
  now.value = Date.now();
}, 1_000);
