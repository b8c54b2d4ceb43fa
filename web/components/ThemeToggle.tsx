import { theme, toggleTheme } from "../theme.ts";

/** Switches between the light and the dark theme (`theme-toggle`); it starts on the system's. */
export function ThemeToggle() {
  const dark = theme.value === "dark";
  return (
    <button
      type="button"
      class="theme-toggle"
      data-testid="theme-toggle"
      aria-pressed={dark}
      onClick={toggleTheme}
      title={dark ? "Switch to the light theme" : "Switch to the dark theme"}
    >
      <span aria-hidden="true">{dark ? "☀" : "☾"}</span> {dark ? "Light" : "Dark"}
    </button>
  );
}
