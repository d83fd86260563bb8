// The reminders service process: serves its ROUTER until SIGTERM/SIGINT.
import RemindersService
import Platform

await ServiceMain.run(RemindersService.definition, options: PlatformOptions.parseOrExit())
