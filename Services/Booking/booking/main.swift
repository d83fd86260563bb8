// The booking service process: serves its ROUTER until SIGTERM/SIGINT.
import BookingService
import Platform

await ServiceMain.run(BookingService.definition, options: PlatformOptions.parseOrExit())
