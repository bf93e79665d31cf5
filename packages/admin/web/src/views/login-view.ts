import { api, ApiError, setCsrfToken, type Session } from "../api.js";
import { h } from "../dom.js";

/** Token login: the token is sent once; from then on the HttpOnly session cookie is used. */
export function loginView(root: HTMLElement, onLogin: () => Promise<void>): void {
  const token = h("input", { type: "password", name: "token", autocomplete: "current-password", required: true, "aria-label": "admin token", "data-testid": "login-token" });
  const error = h("p", { class: "error-text", role: "alert" });
  const form = h("form", { class: "card login" },
    h("h1", {}, "Tether console"),
    h("p", { class: "muted" }, "Log in with an admin token. Viewer tokens can look; operator tokens can also act."),
    h("label", { class: "field" }, h("span", {}, "Token"), token),
    h("button", { type: "submit", class: "primary", "data-testid": "login-submit" }, "Log in"),
    error,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const s = await api<Session>("POST", "session", { token: token.value });
      setCsrfToken(s.csrfToken);
      token.value = "";
      await onLogin();
    } catch (err) {
      error.textContent = err instanceof ApiError && err.status === 401 ? "Unknown token." : String(err);
    }
  });
  root.replaceChildren(form);
  token.focus();
}
