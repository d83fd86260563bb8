// The reminders service process: serves its ROUTER until SIGTERM/SIGINT.
import RemindersService
import Platform

let options = PlatformOptions.parseOrExit()
await ServiceMain.run(RemindersService.definition(configuration: ProcessSetup.configuration(options)), options: options)
