/* Start-up code for QEMU's mps2-an386 board (Cortex-M4F) under newlib's
 * rdimon semihosting runtime: the vector table and a reset handler that
 * enables the FPU and enters newlib's _start (which clears .bss, sets up
 * argv from the semihosting command line and calls main). Every fault ends
 * the program with exit status 3 over semihosting, so a test fails instead
 * of hanging. */
#include <stdint.h>
#include <unistd.h>

extern uint32_t __stack;    /* Top of RAM (the linker script). */
extern void _start(void);   /* newlib's crt0 (rdimon-crt0.o). */

#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)

void Reset_Handler(void) {
  /* Full access to the coprocessors CP10 and CP11: the FPU. */
  SCB_CPACR |= (0xFu << 20);
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  _start();
  for (;;) {
  }
}

static void Fault_Handler(void) { _exit(3); }

/* Cortex-M exceptions 1..15; the board's interrupts stay disabled. */
__attribute__((section(".vectors"), used)) static const void *const vectors[16] = {
    &__stack,             /* Initial stack pointer. */
    Reset_Handler,        /* Reset. */
    Fault_Handler,        /* NMI. */
    Fault_Handler,        /* HardFault. */
    Fault_Handler,        /* MemManage. */
    Fault_Handler,        /* BusFault. */
    Fault_Handler,        /* UsageFault. */
    0, 0, 0, 0,           /* Reserved. */
    Fault_Handler,        /* SVCall. */
    Fault_Handler,        /* DebugMonitor. */
    0,                    /* Reserved. */
    Fault_Handler,        /* PendSV. */
    Fault_Handler,        /* SysTick (not enabled as an interrupt). */
};
