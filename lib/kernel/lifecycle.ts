// What the services the kernel built need from the app's life: work to start once the app is ready,
// to finish before it closes (while the database is still open), and resources to release when it
// closes. The kernel collects them in the order it builds; the HTTP layer hands them to its own
// hooks (app.ts), and a build that fails half-way releases what it had opened.

type Step = () => void | Promise<void>

export class Lifecycle {
  private readonly ready: Step[] = []
  private readonly beforeClose: Step[] = []
  private readonly release: Step[] = []

  /** Runs once the app is ready: an app that fails to start never runs it. */
  onReady (step: Step): void { this.ready.push(step) }
  /** Runs first when the app closes, in the order given (the database is still open). */
  onPreClose (step: Step): void { this.beforeClose.push(step) }
  /** Releases a resource when the app closes: the last one opened is released first. */
  onClose (step: Step): void { this.release.unshift(step) }

  async started (): Promise<void> {
    for (const step of this.ready) await step()
  }

  async preClose (): Promise<void> {
    for (const step of this.beforeClose) await step()
  }

  async close (): Promise<void> {
    for (const step of this.release) await step()
  }

  /** After a failed build: everything built so far is stopped and released; the build's error stands. */
  async abandon (): Promise<void> {
    for (const step of [...this.beforeClose, ...this.release]) {
      try {
        await step()
      } catch {
        // The start failed already: that error is the one worth reporting.
      }
    }
  }
}
