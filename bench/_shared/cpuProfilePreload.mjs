// Preloaded into the protoscan process by `npm run bench:realtime -- --cpu-prof <dir>` (NODE_OPTIONS
// `--import`, where node refuses `--cpu-prof` itself): profiles the whole process with the inspector and
// writes `<dir>/protoscan-<pid>.cpuprofile` when it exits. Open it in Chrome DevTools or speedscope.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { join } from "node:path";

const dir = process.env.PROTOSCAN_BENCH_CPU_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 500 });
  session.post("Profiler.start");
  process.once("exit", () => {
    // The in-process session answers synchronously, so the profile is written before the process ends.
    session.post("Profiler.stop", (error, result) => {
      if (!error)
        writeFileSync(join(dir, `protoscan-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
