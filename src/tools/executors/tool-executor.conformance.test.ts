import { describeToolExecutorConformance } from "../../testing/tool-executor-conformance.js";
import { ConcurrentBatchToolExecutor } from "./concurrent-batch-tool-executor.js";
import { RetryToolExecutor } from "./retry-tool-executor.js";
import { SafeToolExecutor } from "./safe-tool-executor.js";

describeToolExecutorConformance("safe", () => new SafeToolExecutor());
describeToolExecutorConformance(
  "retry",
  () =>
    new RetryToolExecutor({
      inner: new SafeToolExecutor(),
      max_attempts: 2,
      initial_delay_ms: 0,
      backoff_multiplier: 1,
      max_delay_ms: 0,
      jitter: "none",
    }),
);
describeToolExecutorConformance(
  "concurrent_batch",
  () => new ConcurrentBatchToolExecutor(new SafeToolExecutor(), 2),
  {
    batch: true,
  },
);
