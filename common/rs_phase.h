/*
 * rs_phase.h - where a run's time goes: with ROOMSIM_PHASES set (and not 0), each stamp is a
 * line on stderr with the time since the origin, since the last stamp, and what was just
 * done. The origin is ROOMSIM_PHASES itself when it is a time since the epoch (date +%s.%N),
 * shared by every rank it reaches, else the first stamp. rs_phase_rank names the rank in the
 * lines. Any module may stamp; only the steps of a run's setup and end do.
 */
#ifndef RS_PHASE_H
#define RS_PHASE_H

#ifdef __cplusplus
extern "C" {
#endif

void rs_phase(const char *what);
void rs_phase_rank(int rank);
int rs_phases(void);	/* ROOMSIM_PHASES is on */

#ifdef __cplusplus
}
#endif

#endif
