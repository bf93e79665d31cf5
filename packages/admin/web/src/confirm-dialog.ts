import { h } from "./dom.js";

/**
 * Asks before a destructive action, in a modal <dialog>. Resolves true only on the confirm
 * button; Escape or Cancel resolve false. `input` adds a required text field (e.g. a reason)
 * whose value is returned instead of true.
 */
export function confirmAction(opts: { title: string; body: string; confirm: string; input?: { label: string; placeholder?: string } }): Promise<string | boolean> {
  return new Promise((resolve) => {
    const field = opts.input ? h("input", { type: "text", required: true, placeholder: opts.input.placeholder ?? "", "aria-label": opts.input.label, "data-testid": "confirm-input" }) : undefined;
    const ok = h("button", { type: "submit", class: "danger", "data-testid": "confirm-ok" }, opts.confirm);
    const cancel = h("button", { type: "button", "data-testid": "confirm-cancel" }, "Cancel");
    const form = h(
      "form",
      { method: "dialog" },
      h("h3", {}, opts.title),
      h("p", {}, opts.body),
      field ? h("label", {}, opts.input!.label, field) : null,
      h("div", { class: "actions" }, cancel, ok),
    );
    const dialog = h("dialog", { "data-testid": "confirm-dialog" }, form);
    let answered: string | boolean = false;
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      if (field && field.value.trim() === "") return field.focus();
      answered = field ? field.value.trim() : true;
      dialog.close();
    });
    cancel.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(answered);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    (field ?? ok).focus();
  });
}
