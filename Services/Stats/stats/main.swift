// The stats service process: serves its ROUTER until SIGTERM/SIGINT.
import StatsService
import Platform

await ServiceMain.run(StatsService.definition, options: PlatformOptions.parseOrExit())
