import { describeHostRunnerScenarios } from "../../../test/support/host-runner-scenarios.js";
import { HOST_RUNNER_CONFIG } from "../../../test/support/host-scenario.js";
import { appConfigSchema } from "../../config/app-config-schema.js";
import { Runtime } from "../../runtime/runtime.js";
import { serveKeelRunner } from "../runner/serve-keel-runner.js";
import { createInMemoryTransportPair } from "../transport/in-memory-transport.js";

describeHostRunnerScenarios("in one process, over an in-memory channel", async (host) => {
  const runtime = await Runtime.fromDict(HOST_RUNNER_CONFIG);
  const [hostEnd, runnerEnd] = createInMemoryTransportPair();
  serveKeelRunner({
    runtime,
    agents: appConfigSchema().parse(HOST_RUNNER_CONFIG).agents,
    transport: runnerEnd,
  });
  return host.attach(hostEnd, { onClose: () => void runtime.close() });
});
