// Posthorn dashboard: progressive enhancement only. Every page works without
// this script; with it, times read in local time, copy buttons copy, and
// parts marked data-live-src refresh themselves until they are final.
'use strict';
(function () {
  function localize(root) {
    root.querySelectorAll('time[datetime]').forEach(function (t) {
      var d = new Date(t.getAttribute('datetime'));
      if (isNaN(d.getTime())) return;
      t.title = t.getAttribute('datetime');
      t.textContent = d.toLocaleString();
    });
  }

  // Refreshes every 1.5 s until the part says it is final; a server error (5xx) or a lost
  // connection waits longer each time (up to 30 s) and tries again; signed out, or a page
  // that is gone (4xx), stops it and leaves what is shown.
  function poll(el, wait) {
    if (el.querySelector('[data-final]')) return;
    wait = wait || 1500;
    setTimeout(function () {
      fetch(el.getAttribute('data-live-src'), { credentials: 'same-origin', headers: { accept: 'text/html' } })
        .then(function (res) {
          if (res.redirected || (res.status >= 400 && res.status < 500)) return 'stop';
          if (!res.ok) return null;
          return res.text();
        })
        .then(function (html) {
          if (html === 'stop') return;
          if (html === null) return poll(el, Math.min(wait * 2, 30000));
          el.innerHTML = html;
          localize(el);
          poll(el);
        })
        .catch(function () {
          poll(el, Math.min(wait * 2, 30000));
        });
    }, wait);
  }

  document.addEventListener('click', function (ev) {
    var button = ev.target.closest && ev.target.closest('button[data-copy]');
    if (!button || !navigator.clipboard) return;
    navigator.clipboard.writeText(button.getAttribute('data-copy')).then(function () {
      var label = button.textContent;
      button.textContent = 'Copied';
      setTimeout(function () {
        button.textContent = label;
      }, 1500);
    });
  });

  // A part that follows typing: a form's data-preview-form names the address of its result part,
  // data-preview-target the id of the element it replaces (preview-result unless named): a
  // template's preview, a segment's count. The form still works as a plain submit without this.
  document.querySelectorAll('form[data-preview-form]').forEach(function (form) {
    var target = document.getElementById(form.getAttribute('data-preview-target') || 'preview-result');
    var timer;
    var latest = 0;
    if (!target) return;
    form.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        var mine = ++latest;
        fetch(form.getAttribute('data-preview-form'), {
          method: 'POST',
          credentials: 'same-origin',
          body: new URLSearchParams(new FormData(form)),
        })
          .then(function (res) {
            // 400 is a refused render (its alert is the part); anything else (signed out, gone) leaves what is shown
            return (res.status === 200 || res.status === 400) && !res.redirected ? res.text() : null;
          })
          .then(function (html) {
            if (html !== null && mine === latest) target.innerHTML = html;
          })
          .catch(function () {});
      }, 400);
    });
  });

  // The template editor's preview: its Preview button posts the whole form into the preview
  // frame; pressed here once at load and again when typing pauses. Without this script the
  // button does the same when pressed.
  document.querySelectorAll('form[data-frame-preview]').forEach(function (form) {
    var button = form.querySelector('[data-preview-button]');
    var timer;
    if (!button || !form.requestSubmit) return;
    form.requestSubmit(button);
    form.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        form.requestSubmit(button);
      }, 600);
    });
  });

  localize(document);
  document.querySelectorAll('[data-live-src]').forEach(function (el) {
    poll(el);
  });
})();
