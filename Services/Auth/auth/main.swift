// The auth service process: serves its ROUTER until SIGTERM/SIGINT.
import AuthService
import Platform

await ServiceMain.run(AuthService.definition, options: PlatformOptions.parseOrExit())
