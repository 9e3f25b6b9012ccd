// Shows the visitor's local time under the heading.
(function () {
  var line = document.createElement('p');
  line.id = 'local-time';
  line.textContent = 'Your local time: ' + new Date().toLocaleTimeString();
  document.querySelector('h1').insertAdjacentElement('afterend', line);
})();
