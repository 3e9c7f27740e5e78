/**
 * A capability one domain offers the others without either importing the other: its interface is declared
 * in shared machinery, the domain that has it provides it when its state is made, and a domain that needs
 * it finds it when a request asks (so the order of domains does not matter).
 */
export interface Port<T> {
  readonly name: string
  /** Never set: carries T, so that `provide` and `find` are typed by the port. */
  readonly type?: T
}

export const definePort = <T>(name: string): Port<T> => ({ name })

/** One app's ports: what its domains provide to each other. */
export class Ports {
  readonly #provided = new Map<string, unknown>()

  provide<T>(port: Port<T>, implementation: T): void {
    if (this.#provided.has(port.name)) throw new Error(`Port ${port.name} is provided twice`)
    this.#provided.set(port.name, implementation)
  }

  /** The implementation provided, or undefined when no domain of this app provides the port. */
  find<T>(port: Port<T>): T | undefined {
    return this.#provided.get(port.name) as T | undefined
  }
}
