// Lumen gallery: opens a photo full size, with keyboard navigation (Esc, ←, →).
(function () {
  'use strict';
  const links = Array.from(document.querySelectorAll('#gallery .photo-link'));
  if (links.length === 0) return;

  const overlay = document.createElement('div');
  overlay.className = 'lightbox';
  overlay.hidden = true;
  overlay.setAttribute('role', 'dialog');
  overlay.setAttribute('aria-modal', 'true');
  overlay.innerHTML =
    '<figure><img alt=""><figcaption></figcaption></figure>' +
    '<button type="button" class="lightbox-close" aria-label="Close">×</button>' +
    '<button type="button" class="lightbox-previous" aria-label="Previous photo">‹</button>' +
    '<button type="button" class="lightbox-next" aria-label="Next photo">›</button>';
  document.body.appendChild(overlay);

  const image = overlay.querySelector('img');
  const caption = overlay.querySelector('figcaption');
  let current = -1;

  function visibleLinks() {
    return links.filter((link) => !link.closest('.photo').hidden);
  }

  function show(link) {
    const thumbnail = link.querySelector('img');
    image.src = link.href;
    image.alt = thumbnail.alt;
    caption.textContent = thumbnail.alt;
    current = visibleLinks().indexOf(link);
    overlay.hidden = false;
  }

  function step(delta) {
    const list = visibleLinks();
    if (list.length === 0) return;
    show(list[(current + delta + list.length) % list.length]);
  }

  function close() {
    overlay.hidden = true;
  }

  for (const link of links) {
    link.addEventListener('click', (event) => {
      event.preventDefault();
      show(link);
    });
  }
  overlay.querySelector('.lightbox-close').addEventListener('click', close);
  overlay.querySelector('.lightbox-previous').addEventListener('click', () => step(-1));
  overlay.querySelector('.lightbox-next').addEventListener('click', () => step(1));
  overlay.addEventListener('click', (event) => {
    if (event.target === overlay) close();
  });
  document.addEventListener('keydown', (event) => {
    if (overlay.hidden) return;
    if (event.key === 'Escape') close();
    if (event.key === 'ArrowLeft') step(-1);
    if (event.key === 'ArrowRight') step(1);
  });
})();
