// Keyboard shortcuts for the review and human-baseline pages (the only script they load).
// A key clicks the button marked data-key="<key>"; digits tick the reason checkbox marked
// data-reason="<digit>". Keys typed into a text field are left alone (Esc leaves the field).
// After one form is sent, further keys and submits are ignored until the next page, so a
// key held down cannot send the same decision twice (the server refuses repeats as well).
(function () {
  "use strict";
  var sent = false;

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (sent) {
      event.preventDefault();
      return;
    }
    if (form.hasAttribute("data-needs-reason") && !form.querySelector("input[data-reason]:checked")) {
      event.preventDefault();
      var hint = document.getElementById("reject-hint");
      if (hint) hint.hidden = false;
      return;
    }
    sent = true;
  });

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || sent) return;
    var target = event.target;
    var tag = target && target.tagName;
    if (tag === "TEXTAREA" || (tag === "INPUT" && target.type === "text")) {
      if (event.key === "Escape") target.blur();
      return;
    }
    var key = (event.key || "").toLowerCase();
    if (/^[1-9]$/.test(key)) {
      var box = document.querySelector('input[data-reason="' + key + '"]');
      if (box) {
        box.checked = !box.checked;
        event.preventDefault();
      }
      return;
    }
    if (key.length !== 1) return;
    var button = document.querySelector('[data-key="' + key + '"]');
    if (button && !button.disabled) {
      event.preventDefault();
      button.click();
    }
  });
})();
