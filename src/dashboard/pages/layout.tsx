import type { ReactNode } from 'react'

export interface Chrome {
  /** The signed-in operator's email; undefined on the pages shown before sign-in. */
  operator?: string
  /** The session's CSRF token, carried by every form. */
  csrf?: string
  /** Which navigation link is the current page. */
  current?: 'overview' | 'organizations' | 'requests' | 'data'
  notice?: string
  error?: string
}

const NAV = [
  ['overview', '/dashboard', 'Overview'],
  ['organizations', '/dashboard/organizations', 'Organizations'],
  ['requests', '/dashboard/requests', 'Requests'],
  ['data', '/dashboard/data', 'Data'],
] as const

/** The hidden field every state-changing form carries (checked beside the Origin header). */
export const Csrf = ({ token }: { token?: string }) => (
  <input type="hidden" name="_csrf" value={token ?? ''} />
)

/** A POST form of one button; `label` is its accessible name. */
export function ActionButton(props: {
  action: string
  csrf?: string
  label: string
  text?: string
  fields?: Record<string, string>
  danger?: boolean
}) {
  return (
    <form method="post" action={props.action} className="inline">
      <Csrf token={props.csrf} />
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      <button type="submit" aria-label={props.label} className={props.danger ? 'danger' : undefined}>
        {props.text ?? props.label}
      </button>
    </form>
  )
}

export function Layout(props: { title: string; chrome: Chrome; children: ReactNode; scripts?: boolean }) {
  const { chrome } = props
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · svc dashboard`}</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/assets/dashboard.css" />
        {props.scripts && <link rel="stylesheet" href="/assets/uPlot.min.css" />}
      </head>
      <body>
        <header className="top">
          <a className="brand" href="/dashboard">
            svc
          </a>
          {chrome.operator && (
            <nav aria-label="Dashboard">
              <ul>
                {NAV.map(([key, href, text]) => (
                  <li key={key}>
                    <a href={href} aria-current={chrome.current === key ? 'page' : undefined}>
                      {text}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
          )}
          {chrome.operator && (
            <form method="post" action="/dashboard/sign-out" className="inline signout">
              <Csrf token={chrome.csrf} />
              <span className="who">{chrome.operator}</span>
              <button type="submit">Sign out</button>
            </form>
          )}
        </header>
        <main>
          <h1>{props.title}</h1>
          {chrome.notice && (
            <p className="notice" role="status">
              {chrome.notice}
            </p>
          )}
          {chrome.error && (
            <p className="error" role="alert">
              {chrome.error}
            </p>
          )}
          {props.children}
        </main>
        {props.scripts && <script src="/assets/uPlot.iife.min.js" />}
        {props.scripts && <script src="/assets/dashboard.js" />}
      </body>
    </html>
  )
}

/** A bar chart drawn by dashboard.js from the table beside it; the table is the chart's numbers as text. */
export function Chart(props: {
  id: string
  caption: string
  rows: { label: string; values: number[] }[]
  series: string[]
}) {
  return (
    <figure className="chart">
      <div className="plot" data-chart={props.id} aria-hidden="true" />
      <details>
        <summary>{`${props.caption}: the numbers`}</summary>
        <table id={props.id} className="numbers">
          <caption>{props.caption}</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              {props.series.map((name) => (
                <th scope="col" key={name}>
                  {name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.rows.map((row) => (
              <tr key={row.label}>
                <th scope="row">{row.label}</th>
                {row.values.map((value, index) => (
                  <td key={props.series[index]}>{value}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      <figcaption>{props.caption}</figcaption>
    </figure>
  )
}

/** A table that may scroll sideways on a narrow screen: a named region reachable by keyboard. */
export function Scroll(props: { label: string; children: ReactNode }) {
  return (
    <div className="scroll" role="region" aria-label={props.label} tabIndex={0}>
      {props.children}
    </div>
  )
}

export const formatCount = (n: number) => n.toLocaleString('en-US')
export const formatTime = (iso: string | null | undefined) =>
  iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC') : '–'
