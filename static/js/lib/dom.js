// Small DOM helpers shared by the page scripts and the chart modules.

/** A new `tag` element with `className` (when given) and `text` as its textContent (when given). */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined && text !== null) {
    node.textContent = String(text);
  }
  return node;
}

/** Show `text` in the notice element `target`, styled by `kind` (info, error, ...). */
export function showMessage(target, text, kind = "info") {
  target.textContent = text;
  target.className = `notice notice--${kind}`;
  target.hidden = false;
}
