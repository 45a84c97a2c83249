import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeEventBusConformance } from "../testing/event-bus-conformance.js";
import { AsyncEventBus } from "./async-event-bus.js";
import { FileLoggingEventBus } from "./file-logging-event-bus.js";

describeEventBusConformance("async", () => new AsyncEventBus());

describeEventBusConformance(
  "file_logging",
  async () =>
    new FileLoggingEventBus({
      inner: new AsyncEventBus(),
      logPath: join(await mkdtemp(join(tmpdir(), "keel-bus-conformance-")), "events.jsonl"),
    }),
  {
    cleanup: (bus) => rm(join((bus as FileLoggingEventBus).logPath, ".."), { recursive: true, force: true }),
  },
);
