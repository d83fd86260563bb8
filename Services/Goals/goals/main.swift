// The goals service process: serves its ROUTER until SIGTERM/SIGINT.
import GoalsService
import Platform

await ServiceMain.run(GoalsService.definition, options: PlatformOptions.parseOrExit())
