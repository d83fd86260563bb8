// The booking service process: serves its ROUTER until SIGTERM/SIGINT.
import BookingService
import Platform

let options = PlatformOptions.parseOrExit()
await ServiceMain.run(BookingService.definition(configuration: ProcessSetup.configuration(options)), options: options)
