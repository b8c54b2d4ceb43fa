import { signal } from "@preact/signals";

/** The theme the person picked, if any (localStorage may be refused: then none). */
const picked = (): string | null => {
  try {
    return localStorage.getItem("theme");
  } catch {
    return null;
  }
};

/** `light` or `dark`: the system's until the person picks one with the toggle (kept in localStorage). */
const saved = picked();
const system = () => (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");

export const theme = signal<"light" | "dark">(saved === "dark" || saved === "light" ? saved : system());

const apply = () => {
  document.documentElement.dataset.theme = theme.value;
};
apply();

matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
  if (picked() === null) {
    theme.value = system();
    apply();
  }
});

export function toggleTheme(): void {
  theme.value = theme.value === "dark" ? "light" : "dark";
  try {
    localStorage.setItem("theme", theme.value);
  } catch {
    // private mode: the choice lasts until the page closes
  }
  apply();
}
