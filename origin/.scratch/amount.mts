import autocannon from 'autocannon';
const r = await autocannon({ url: `http://127.0.0.1:${process.argv[2]}/index.html`, connections: 10, amount: 6000 });
console.log(r.requests.average, r.requests.total);
