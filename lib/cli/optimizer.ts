// `npm start` runs Node with `--no-opt` (package.json's `start`, a scaffold's too) and turns V8's
// optimizing compiler on once the server listens (decision D137). Start-up code (schemas compiled,
// plans and validators built) runs once; optimizing it left the compiler's code pages and the memory
// its threads freed resident in an idle server, about 10 MiB, and the compiler's work slowed the start
// itself. Requests' hot code is optimized as it would be without the flag.
import { setFlagsFromString } from 'node:v8'

/** Turns V8's optimizing compiler on from now on (a no-op when it was never off). */
export function optimizeFromNowOn (): void {
  setFlagsFromString('--opt')
}
