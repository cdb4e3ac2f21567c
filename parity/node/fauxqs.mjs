// Starts fauxqs for cmd/parity on the port given as the first argument,
// without request logs, and says "ready" once it listens.
import { startFauxqs } from "fauxqs";

const port = Number(process.argv[2]);
await startFauxqs({ port, host: "127.0.0.1", logger: false });
console.log("ready");
