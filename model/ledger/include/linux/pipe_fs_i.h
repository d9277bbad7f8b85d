static inline bool pipe_is_full(const struct pipe_inode_info *pipe)
{
	return pipe_full(pipe->head, pipe->tail, pipe->max_usage);
}
