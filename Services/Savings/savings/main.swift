// The savings service process: serves its ROUTER until SIGTERM/SIGINT.
import SavingsService
import Platform

await ServiceMain.run(SavingsService.definition, options: PlatformOptions.parseOrExit())
