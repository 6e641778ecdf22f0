// The dashboard's own behaviour beyond htmx. A file, not inline handlers: the
// Content-Security-Policy runs no inline script (and htmx runs with allowEval off).
document.addEventListener("htmx:afterRequest", function (event) {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.hasAttribute("data-reset-on-success") && event.detail.successful) {
    form.reset();
  }
});
