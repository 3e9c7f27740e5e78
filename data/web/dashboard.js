// The dashboard's only script (served from /assets; the pages allow no inline script). It enhances what the
// server rendered: every figure and chart is already on the page as text without it.
;(() => {
  'use strict'

  // Copy buttons: <button data-copy="element id">.
  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.addEventListener('click', async () => {
      const source = document.getElementById(button.dataset.copy)
      if (!source) return
      try {
        await navigator.clipboard.writeText(source.textContent)
        button.textContent = 'Copied'
      } catch {
        const range = document.createRange()
        range.selectNodeContents(source)
        const selection = window.getSelection()
        selection.removeAllRanges()
        selection.addRange(range)
        button.textContent = 'Selected: press Ctrl+C'
      }
    })
  }

  // Live figures: <dl data-live-source="url"> holding <dd data-live="name">, refreshed every 5 s while visible.
  const formats = {
    requestsPerMinute: (n) => n.toLocaleString('en-US'),
    p50Ms: (ms) => (ms === null ? '–' : `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`),
    p99Ms: (ms) => (ms === null ? '–' : `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`),
    errorRate: (rate) => `${(rate * 100).toFixed(rate < 0.1 ? 2 : 1)} %`,
  }
  for (const list of document.querySelectorAll('[data-live-source]')) {
    const refresh = async () => {
      if (document.visibilityState !== 'visible') return
      try {
        const response = await fetch(list.dataset.liveSource, { credentials: 'same-origin' })
        if (!response.ok) return
        const figures = await response.json()
        for (const cell of list.querySelectorAll('[data-live]')) {
          const name = cell.dataset.live
          if (name in figures && formats[name]) cell.textContent = formats[name](figures[name])
        }
      } catch {
        // The server is restarting or the network dropped: the next tick tries again.
      }
    }
    setInterval(refresh, 5000)
  }

  // Charts: <div data-chart="table id"> drawn with uPlot from the table's rows (first column: label).
  if (typeof uPlot !== 'function') return
  const colors = ['#1f5fbf', '#b35900', '#b3261e']
  for (const holder of document.querySelectorAll('[data-chart]')) {
    const table = document.getElementById(holder.dataset.chart)
    if (!table) continue
    const names = [...table.querySelectorAll('thead th')].slice(1).map((th) => th.textContent)
    const rows = [...table.querySelectorAll('tbody tr')]
    const labels = rows.map((row) => row.querySelector('th').textContent)
    const series = names.map((_, index) => rows.map((row) => Number(row.querySelectorAll('td')[index].textContent)))
    const xs = labels.map((_, index) => index)
    const bars = uPlot.paths.bars({ size: [0.8, 40] })
    const draw = () => {
      holder.textContent = ''
      new uPlot(
        {
          width: Math.max(260, holder.clientWidth),
          height: 180,
          legend: { show: true },
          scales: { x: { time: false } },
          axes: [
            {
              space: 100,
              incrs: [1, 2, 3, 6, 12, 24, 48],
              values: (_u, ticks) => ticks.map((tick) => (labels[tick] ?? '').slice(5)),
            },
            { size: 50 },
          ],
          series: [
            { label: 'When', value: (_u, index) => labels[index] ?? '' },
            ...names.map((name, index) => ({
              label: name,
              stroke: colors[index % colors.length],
              fill: index === 0 ? 'rgba(31, 95, 191, 0.35)' : undefined,
              paths: index === 0 ? bars : undefined,
              points: { show: false },
            })),
          ],
        },
        [xs, ...series],
        holder,
      )
    }
    draw()
    let resizing
    window.addEventListener('resize', () => {
      clearTimeout(resizing)
      resizing = setTimeout(draw, 200)
    })
  }
})()
