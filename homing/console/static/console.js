// Homing console: small enhancements only; every flow works without this file.
// Buttons with data-copy copy the text of the element whose id they name.
"use strict";
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(() => {
    button.textContent = "Copied";
  });
});
document.querySelectorAll("button[data-copy]").forEach((button) => { button.hidden = false; });
