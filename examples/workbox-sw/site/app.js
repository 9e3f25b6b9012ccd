// The site's page script: registers its Workbox worker and shows the server's time.
if ('serviceWorker' in navigator) navigator.serviceWorker.register('/sw.js');
fetch('/api/time')
  .then((response) => response.json())
  .then((body) => (document.getElementById('clock').textContent = 'Server time: ' + body.now))
  .catch(() => (document.getElementById('clock').textContent = 'Server time: offline'));
