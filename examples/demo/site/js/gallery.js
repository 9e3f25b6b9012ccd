// Lumen gallery: the filter chips above the grid.
(function () {
  'use strict';
  const chips = Array.from(document.querySelectorAll('.chip[data-filter]'));
  const photos = Array.from(document.querySelectorAll('#gallery .photo'));
  const count = document.getElementById('photo-count');

  function applyFilter(filter) {
    let shown = 0;
    for (const photo of photos) {
      const visible = filter === 'all' || photo.dataset.tag === filter;
      photo.hidden = !visible;
      if (visible) shown += 1;
    }
    for (const chip of chips) chip.setAttribute('aria-pressed', String(chip.dataset.filter === filter));
    if (count) count.textContent = shown + (shown === 1 ? ' photograph' : ' photographs');
  }

  for (const chip of chips) chip.addEventListener('click', () => applyFilter(chip.dataset.filter || 'all'));
})();
