import { type Chrome, Layout } from './layout.js'

/** The sign-in form; with no operator yet, only the command that creates the first one. */
export function SignInPage(props: { chrome: Chrome; noOperator: boolean; email?: string }) {
  if (props.noOperator) {
    return (
      <Layout title="Set up the dashboard" chrome={props.chrome}>
        <p>No operator exists yet. Create the first one on the server, from a shell:</p>
        <pre>
          <code>svc operators create you@example.org</code>
        </pre>
        <p>Then reload this page and sign in.</p>
      </Layout>
    )
  }
  return (
    <Layout title="Sign in" chrome={props.chrome}>
      <form method="post" action="/dashboard/sign-in" className="stack narrow">
        <label>
          Email
          <input
            type="email"
            name="email"
            autoComplete="username"
            required
            defaultValue={props.email ?? ''}
          />
        </label>
        <label>
          Password
          <input type="password" name="password" autoComplete="current-password" required />
        </label>
        <button type="submit">Sign in</button>
      </form>
    </Layout>
  )
}

/** A request refused before it could change anything (another site's form, an expired form). */
export function RefusedPage(props: { chrome: Chrome; reason: string; title?: string }) {
  return (
    <Layout title={props.title ?? 'Refused'} chrome={props.chrome}>
      <p>{props.reason}</p>
      <p>
        <a href="/dashboard">Back to the dashboard</a>
      </p>
    </Layout>
  )
}
