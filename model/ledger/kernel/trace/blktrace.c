void blk_fill_rwbs(char *rwbs, blk_opf_t opf)
{
	int i = 0;

	if (opf & REQ_PREFLUSH)
		rwbs[i++] = 'F';

	switch (opf & REQ_OP_MASK) {
	case REQ_OP_WRITE:
		rwbs[i++] = 'W';
		break;
	case REQ_OP_DISCARD:
		rwbs[i++] = 'D';
		break;
	case REQ_OP_SECURE_ERASE:
		rwbs[i++] = 'D';
		rwbs[i++] = 'E';
		break;
	case REQ_OP_FLUSH:
		rwbs[i++] = 'F';
		break;
	case REQ_OP_READ:
		rwbs[i++] = 'R';
		break;
	case REQ_OP_ZONE_APPEND:
		rwbs[i++] = 'Z';
		rwbs[i++] = 'A';
		break;
	case REQ_OP_ZONE_RESET:
	case REQ_OP_ZONE_RESET_ALL:
		rwbs[i++] = 'Z';
		rwbs[i++] = 'R';
		if ((opf & REQ_OP_MASK) == REQ_OP_ZONE_RESET_ALL)
			rwbs[i++] = 'A';
		break;
	case REQ_OP_ZONE_FINISH:
		rwbs[i++] = 'Z';
		rwbs[i++] = 'F';
		break;
	case REQ_OP_ZONE_OPEN:
		rwbs[i++] = 'Z';
		rwbs[i++] = 'O';
		break;
	case REQ_OP_ZONE_CLOSE:
		rwbs[i++] = 'Z';
		rwbs[i++] = 'C';
		break;
	case REQ_OP_WRITE_ZEROES:
		rwbs[i++] = 'W';
		rwbs[i++] = 'Z';
		break;
	default:
		rwbs[i++] = 'N';
	}

	if (opf & REQ_FUA)
		rwbs[i++] = 'F';
	if (opf & REQ_RAHEAD)
		rwbs[i++] = 'A';
	if (opf & REQ_SYNC)
		rwbs[i++] = 'S';
	if (opf & REQ_META)
		rwbs[i++] = 'M';
	if (opf & REQ_ATOMIC)
		rwbs[i++] = 'U';

	WARN_ON_ONCE(i >= RWBS_LEN);

	rwbs[i] = '\0';
}
