// Harbor Docs: builds the "On this page" box from the page's h2 headings.
(function () {
  'use strict';
  const toc = document.querySelector('.toc');
  if (!toc) return;
  const headings = Array.from(document.querySelectorAll('.content h2'));
  if (headings.length < 2) return;
  const list = document.createElement('ol');
  headings.forEach((heading, index) => {
    if (!heading.id) heading.id = 'section-' + (index + 1);
    const item = document.createElement('li');
    const link = document.createElement('a');
    link.href = '#' + heading.id;
    link.textContent = heading.textContent;
    item.appendChild(link);
    list.appendChild(item);
  });
  const title = document.createElement('strong');
  title.textContent = 'On this page';
  toc.append(title, list);
})();
