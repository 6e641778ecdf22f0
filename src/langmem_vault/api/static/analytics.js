// The analytics page's two charts, from the JSON the page carries (#chart-data).
// A file of its own: the dashboard's Content-Security-Policy runs no inline script.
(function () {
  const data = JSON.parse(document.getElementById("chart-data").textContent);
  new Chart(document.getElementById("growth"), {
    type: "line",
    data: { labels: data.growth.labels, datasets: [
      { label: "new facts", data: data.growth.daily, borderColor: "#2563eb", backgroundColor: "rgba(37,99,235,.15)", fill: true, tension: .25 },
      { label: "total", data: data.growth.cumulative, borderColor: "#16a34a", yAxisID: "total", tension: .25 } ] },
    options: { animation: false, responsive: true, scales: { y: { beginAtZero: true, ticks: { precision: 0 } }, total: { position: "right", beginAtZero: true, grid: { drawOnChartArea: false } } } }
  });
  new Chart(document.getElementById("categories"), {
    type: "doughnut",
    data: { labels: data.categories.labels, datasets: [{ data: data.categories.values, backgroundColor: data.categories.colours }] },
    options: { animation: false, responsive: true, plugins: { legend: { position: "bottom" } } }
  });
  document.body.dataset.chartsReady = "1";
})();
