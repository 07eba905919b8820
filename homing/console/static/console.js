// Homing console: small enhancements only; every flow works without this file.
// Loaded in the head (not deferred): it marks the page as scripted at once, so a
// narrow screen starts with the menu folded instead of flashing it open.
// Buttons with data-copy copy the text of the element whose id they name; the
// "Menu" button folds and unfolds the navigation on a narrow screen.
"use strict";
document.documentElement.classList.add("js");

function toggleMenu(button) {
  const open = button.getAttribute("aria-expanded") !== "true";
  button.setAttribute("aria-expanded", String(open));
  document.getElementById(button.getAttribute("aria-controls")).classList.toggle("open", open);
}

document.addEventListener("click", (event) => {
  const menu = event.target.closest("button.menu-toggle");
  if (menu) {
    toggleMenu(menu);
    return;
  }
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(() => {
    button.textContent = "Copied";
  });
});

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("button[data-copy], button.menu-toggle").forEach((button) => {
    button.hidden = false;
  });
});
