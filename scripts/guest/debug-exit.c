/*
 * debug-exit: end the QEMU guest with an exit code the host can read.
 *
 * Usage (in the guest, as root): debug-exit CODE
 *
 * Writes CODE (0..255, masked to one byte) to QEMU's isa-debug-exit device
 * (-device isa-debug-exit,iobase=0xf4,iosize=0x04).  QEMU then exits at once
 * with status (CODE << 1) | 1, so only CODE 0..127 survive the host's 8-bit
 * exit status; run.sh clamps to that range.  If the device is missing the
 * write is ignored and we return 1 so the caller can fall back to poweroff.
 * It first waits until the console has sent everything written to it.
 *
 * Built static by run.sh: gcc -static -Os -o debug-exit debug-exit.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>
#include <termios.h>
#include <unistd.h>

#define DEBUG_EXIT_PORT 0xf4

int main(int argc, char **argv)
{
	long code;
	char *end;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CODE\n", argv[0]);
		return 2;
	}
	code = strtol(argv[1], &end, 0);
	if (*argv[1] == '\0' || *end != '\0' || code < 0 || code > 255) {
		fprintf(stderr, "%s: bad code '%s'\n", argv[0], argv[1]);
		return 2;
	}
	if (ioperm(DEBUG_EXIT_PORT, 4, 1) != 0) {
		perror("debug-exit: ioperm");
		return 1;
	}
	fflush(NULL);
	/*
	 * QEMU exits at the write, and the serial port sends what the tty
	 * layer still holds one character at a time: without waiting for it
	 * to drain, the last lines the guest wrote (the end of run.sh's kernel
	 * log dump) are lost.  Not a tty: nothing to wait for.
	 */
	tcdrain(STDOUT_FILENO);
	tcdrain(STDERR_FILENO);
	outb((unsigned char)code, DEBUG_EXIT_PORT);
	/* Only reached when no isa-debug-exit device is present. */
	fprintf(stderr, "debug-exit: no isa-debug-exit device at 0x%x\n",
		DEBUG_EXIT_PORT);
	return 1;
}
